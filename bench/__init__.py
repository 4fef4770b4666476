"""`make bench`: the figures the issues ask for, printed (not asserted)."""
