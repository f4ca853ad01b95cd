"""`ascend-port doctor`: checks an Ascend host (driver, firmware, CANN, torch / torch-npu / CANN pairing, devices,
the environment variables that hurt). ``environment`` is what the checks read (real or recorded), ``host`` the facts
read from it, ``checks`` the checks, ``versions`` the pairing tables, ``render`` the text and JSON reports."""
