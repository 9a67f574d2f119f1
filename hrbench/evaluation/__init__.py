"""``evaluate()`` of a module over a data set (:mod:`~hrbench.evaluation.evaluate`), modules and signatures (:mod:`~hrbench.evaluation.modules`) and its metrics (:mod:`~hrbench.metrics`)."""

__all__: list[str] = []
