"""`python -m socialpub.cli`: the same as the `socialpub` command."""
import sys

from socialpub.cli import main

sys.exit(main())
