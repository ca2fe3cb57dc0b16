"""Reading English descriptions of objects: the one parser behind query understanding and the verifiers' phrase
reading (which attribute a phrase claims, which colours, patterns, parts and text it names).

- :mod:`.tokens`: words, quoted strings and punctuation with their spans (:func:`~.tokens.tokenize`, in the
  style a reader asks for), singular forms, longest-phrase matching;
- :mod:`.chunks`: runs of tokens read as a colour phrase, pattern, material, shape, count, quote or word;
- :mod:`.clauses`: one clause splitter, its cut rules an option (the query's, the description reader's);
- :mod:`.words`: the parser's word classes (one list per concept; the vocabulary both readers name is in
  :mod:`aiv_verifier.lexicon`);
- :mod:`.phrases`: the verifier's reader, an evidence phrase or a whole description → :class:`~.phrases.PhraseInfo`.

The query decomposer and category predictor (:mod:`aiv_verifier.query.rules`, :mod:`aiv_verifier.query.categories`)
read with the same tokens, chunks and clauses.
"""
