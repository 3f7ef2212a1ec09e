"""Suite-wide settings: a test's verdict never depends on the machine's speed or load
(issue 19).  Property tests draw a fixed sequence of inputs (derandomized, no example
database), have no deadline, and no health check that measures time."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "qkverify",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=False,
)
settings.load_profile("qkverify")
