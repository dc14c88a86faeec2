"""Exits with a status of its own before training."""
import sys

print("config missing")
sys.exit(3)
# expect: skip (a fault fixture: exits with status 3 before any step)
