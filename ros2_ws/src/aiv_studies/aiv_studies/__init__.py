"""Studies that read the privileged synthetic ground truth: what was knowable per episode (oracle audit)
and how the classical verifier answers per attribute (classical study)."""
