"""Where the candidate object's box comes from: privileged ground truth, an external topic, or a model."""
