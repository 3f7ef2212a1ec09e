"""The kernel's claim table, one module per blueprint section (importing this
package registers every entry in :data:`qkverify.kernel.table.TABLE`)."""

from . import (accumulation, attention, balance, clusters, energy, heads, laws, moments, profile,  # noqa: F401
               rank_one, rope)
