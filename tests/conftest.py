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


#: the longest files, measured (`--durations`), started first in this order; then the other files
#: holding a ``slow`` test; a stale entry costs only balance, never a verdict
LONGEST = ("test_docs_examples.py", "test_sampling_kernel.py", "test_make_audit.py", "test_tamper2.py")


def pytest_collection_modifyitems(session, config, items):
    """The long files first (a stable sort, the same on every worker).  With ``--dist loadfile``
    a file stays on one worker, and a long one started last leaves the other workers idle at the
    end; the Makefile passes ``--no-loadscope-reorder`` so that xdist keeps this order instead of
    sorting files by their number of tests."""
    heavy = {item.path for item in items if item.get_closest_marker("slow")}

    def rank(item):
        name = item.path.name
        return (LONGEST.index(name) if name in LONGEST else len(LONGEST) + (item.path not in heavy))

    items.sort(key=rank)
