"""The ``attention-lab`` command (``pip install .``): the app, the class deployment, the core's tools
and the take-home files, from the installed package or from a checkout (:mod:`attention_lab.cli`)."""
