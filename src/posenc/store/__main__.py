"""``python -m posenc.store {train,restamp,status}``: see :func:`posenc.store.cli.main`."""

from .cli import main

raise SystemExit(main())
