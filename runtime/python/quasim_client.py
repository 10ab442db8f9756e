"""The socket client under its old name: it moved into the quasim package
(quasim.client); `import quasim_client` is that same module."""

import sys

import quasim.client

sys.modules[__name__] = quasim.client
