"""CuSeT Workbench dashboard: a router over the pages in `pages/`.

    make run      # or: streamlit run app.py
"""

import streamlit as st

st.set_page_config(page_title="CuSeT Workbench", layout="wide")
pages = [st.Page("pages/home.py", title="Home", default=True)]
st.navigation(pages).run()
