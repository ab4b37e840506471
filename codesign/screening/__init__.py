"""Singularity screening along the nominal gait (thesis 5.4.4): loop-closure IK and
null-space tests. Public: ``screen``, ``ScreenSettings``, ``ScreenResult``,
``screen_mechanism``, ``close_loops`` (module ``codesign.screening.screen``)."""
