"""tracetool's Python package.

Submodules:
  tracetool.dask  - `python3 -m tracetool.dask`: `tracetool summarize` fanned
                    out over a Dask cluster, merged with `tracetool merge`.

Kept minimal: importing `tracetool` imports nothing else (Dask is imported
only by tracetool.dask).
"""

__version__ = "0.1.0"
