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


def pytest_collection_modifyitems(session, config, items):
    """Files holding a ``slow`` test run first (a stable sort, the same on every worker): with
    ``--dist loadfile`` a file stays on one worker, and the long ones started last would leave
    the other workers idle at the end of the run."""
    heavy = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in heavy)
