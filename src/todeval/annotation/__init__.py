"""Human annotation: items exported from a benchmark, a local labelling page, agreement.

* :mod:`.items` -- the item and answer file formats (multi-choice and pairwise kinds);
* :mod:`.agreement` -- Cohen's and Fleiss' kappa, Krippendorff's alpha (nominal, MASI);
* ``todeval annotate export|serve|agreement`` -- the commands (see ``docs/annotation.md``).

A benchmark supplies items through the registry
(:meth:`todeval.registry.Registry.annotation_source`).
"""
