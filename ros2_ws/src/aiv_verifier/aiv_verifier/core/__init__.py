"""ROS-free decision core of the verifier: tracker, fusion, stopping, next-best-view, crop and bookkeeping.

Everything here is plain Python (numpy and Pillow only) so the in-process evaluator, the ROS nodes and the
tests share one implementation of the reference rules in docs/pinverify-spec.md §5.4–5.10.
"""
