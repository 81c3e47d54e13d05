"""The write firewall lives in `pcm_common.firewall`, where every write path reaches it
(the API's writes here, the sweeper's reconsolidation rewrites); this package keeps where
the screen runs (`runner`) and the names it always offered."""

from pcm_common.firewall import (
    DEFAULT_PHONE_REGIONS,
    SECRET_PLUGINS,
    Action,
    Finding,
    Screened,
    ScreenedMetadata,
    SecretDetected,
    WriteFirewall,
)

__all__ = [
    "DEFAULT_PHONE_REGIONS",
    "SECRET_PLUGINS",
    "Action",
    "Finding",
    "Screened",
    "ScreenedMetadata",
    "SecretDetected",
    "WriteFirewall",
]
