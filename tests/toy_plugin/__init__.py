"""Tests of the toy benchmark plug-in (the package itself is todeval_toy, installed with
``pip install -e tests/toy_plugin``)."""
