"""The mathematics of profiles and laws, on exact objects: the profile π(L)
(:mod:`.profile`, Def 6) and the random-matrix laws of Appendix A
(:mod:`.baselines`).  Imports only :mod:`qkverify.exact` and below."""
