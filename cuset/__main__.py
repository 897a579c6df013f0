"""`python -m cuset ...` is the `cuset` command."""

from cuset.cli import main

raise SystemExit(main())
