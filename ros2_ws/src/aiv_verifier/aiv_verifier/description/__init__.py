"""Reading English descriptions of objects: the one parser behind query understanding and the verifiers' phrase
reading (which attribute a phrase claims, which colours, patterns, parts and text it names)."""
