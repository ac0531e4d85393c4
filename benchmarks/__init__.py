"""Developer benchmarks: scripts that run the product and print figures against its targets.

They are not part of the package (the wheel leaves them out, and no module of autotune imports
them); run them from the checkout, whose root puts this folder and the checkout's autotune on the
path:

    python -m benchmarks.rank      cold and warm `rank`, store reuse, a full analysis check
    python -m benchmarks.sizes     predicted against measured across sizes on this host
    python -m benchmarks.stores    streaming stores against stores through the caches, per sweep
    python -m benchmarks.node      a fresh port's figures against its targets (the ECM model alone)
    python -m benchmarks.tuning    tuning on a shared machine: two runs apart, racing against
                                   fixed repetitions

Each takes --help.
"""
