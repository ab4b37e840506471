"""Stage 6, inspection: run reports and freezing parts of a design.

Figures are functions returning :class:`matplotlib.figure.Figure` objects (no pyplot
state; saved with the Agg canvas):

- :func:`codesign.report.heatmap.visit_heatmap`, :func:`~codesign.report.heatmap.phase_heatmaps`,
  :func:`~codesign.report.heatmap.pass_rate_heatmap` — subspace visits (thesis Fig. 5.10);
- :func:`codesign.report.flow.flow_figure` — particle flow (Fig. 3.7);
- :func:`codesign.report.migration.migration_figure` — migration probabilities (Fig. 5.8);
- :func:`codesign.report.progress.progress_figure` — lexicographic progress;
- :func:`codesign.report.table.top_solutions` — top solutions (Table 5.4).

``codesign report RUN`` (:mod:`codesign.commands.report`) writes them with an ``index.html``
and a ``summary.md``; ``codesign freeze`` (:mod:`codesign.commands.freeze`) writes a
new job spec with parts of a solution fixed.
"""
