"""The evidential mode's offline side: surveys of labelled views, the calibration and visibility fits, and the
reports that check them (risk-coverage, reliability, difficulty)."""
