"""What a value may be, and how one is shown: the grammar every entry point checks before anything
is written (job options, payloads, retention keys, periodic schedules, durations). No database
access and no model: ``conf.py`` validates the settings with these rules, so they sit below it.
"""
