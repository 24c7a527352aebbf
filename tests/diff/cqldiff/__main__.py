"""python -m cqldiff ...: the differential tester (see runner.py)."""
import sys

from .runner import main

sys.exit(main(sys.argv[1:]))
