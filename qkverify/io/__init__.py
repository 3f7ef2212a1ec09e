"""Input parsing and provenance: user input files into exact objects
(:mod:`.inputs`), SHA-256 of weights files (:mod:`.hashing`), plain-text
tables (:mod:`.text`).  Imports only :mod:`qkverify.exact`, :mod:`qkverify.math`
and below."""
