"""The run folder: what a run writes besides its result and how it is read back.

:mod:`.layout` names the files and their variants, :mod:`.atomic` is the one writer that puts
files in place all or nothing.
"""
