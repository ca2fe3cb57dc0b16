"""Pixel measurements the checks build on: colour names and lighting-tolerant colour evidence
(:mod:`.colour`), the object's region in the crop (:mod:`.region`), the geometry of pattern marks
(:mod:`.structures`), small marks such as logos (:mod:`.marks`) and OCR engines (:mod:`.ocr`)."""
