"""Analysis scripts: thin commands over the library that turn stored results into paper artefacts."""
