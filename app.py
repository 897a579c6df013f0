"""CuSeT Workbench dashboard: a router over the pages in `pages/`.

    make run      # or: streamlit run app.py
"""

import streamlit as st

st.set_page_config(page_title="CuSeT Workbench", layout="wide")
pages = [
    st.Page("pages/home.py", title="Home", default=True),
    st.Page("pages/heatmap.py", title="Confidence heatmap", url_path="heatmap"),
    st.Page("pages/regions.py", title="Regions", url_path="regions"),
    st.Page("pages/tuning.py", title="Threshold and weights", url_path="tuning"),
]
st.navigation(pages).run()
