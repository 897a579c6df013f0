"""Start the dashboard: `streamlit run app.py`, with Streamlit's legacy `pages/` routing off.

    python -m cuset.serve [STREAMLIT OPTIONS]      # what `make run` runs
    python -m cuset.serve --server.port 8600

Why not plain `streamlit run app.py`: app.py routes with `st.navigation`, but the page files
live in the repo's `pages/` folder, and Streamlit decides once per server, at its first
session, whether an app uses the old `pages/`-folder routing (Multipage v1) by whether such a
folder exists. Until some session has run app.py's `st.navigation`, a browser opening a page's
URL directly (e.g. /finetunes) gets `pages/finetunes.py` run on its own, without app.py: no
page links, no navigation. Setting the flag before the server starts makes every session,
the first included, run app.py, which routes to the page. The flag is Streamlit's own
(`PagesManager.uses_pages_directory`, which `st.navigation` itself sets to False).
"""

from __future__ import annotations

import sys
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app.py"


def main(argv: list[str] | None = None) -> None:
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web.cli import main as streamlit_main

    PagesManager.uses_pages_directory = False
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    streamlit_main()


if __name__ == "__main__":
    main()
