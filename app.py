"""CuSeT Workbench dashboard: a router over the pages in `pages/`.

    make run      # or: python -m cuset.serve (streamlit run app.py, legacy pages/ routing off: see there)

The navigation is drawn here with page links rather than Streamlit's automatic sidebar menu:
the automatic menu also lists every file in `pages/` (helpers included) whenever a live
fragment reruns, so it is switched off in .streamlit/config.toml.
"""

import streamlit as st

st.set_page_config(page_title="CuSeT Workbench", layout="wide", initial_sidebar_state="expanded")
pages = [
    st.Page("pages/home.py", title="Home", default=True),
    st.Page("pages/models.py", title="Models", url_path="models"),
    st.Page("pages/heatmap.py", title="Confidence heatmap", url_path="heatmap"),
    st.Page("pages/regions.py", title="Regions", url_path="regions"),
    st.Page("pages/diff.py", title="Confidence diff", url_path="diff"),
    st.Page("pages/tuning.py", title="Threshold and weights", url_path="tuning"),
    st.Page("pages/finetunes.py", title="Fine-tunes", url_path="finetunes"),
    st.Page("pages/results.py", title="Results", url_path="results"),
    st.Page("pages/figures.py", title="Figures", url_path="figures"),
]
current = st.navigation(pages, position="hidden")
with st.sidebar:
    for page in pages:
        st.page_link(page)
    st.divider()
current.run()
