"""Tests run from the repository root so relative example paths resolve."""

import os

os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
