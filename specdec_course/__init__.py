"""specdec_course: the machinery around the lesson, kept out of ``specdec_lib``.

``sphinx_site`` (Sphinx hooks of the site), ``notebooks`` (regenerate committed notebook outputs),
``quiz`` (the quiz cards), ``coursework`` (student handouts, self-checks and batch grading) and
``train_models`` (``make models``: retrain the shipped weights; needs the ``train`` extra, JAX).
"""
