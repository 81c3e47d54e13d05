"""The write firewall's settings, shared by every service that stores text: ingest (the
API's writes) and the sweeper (reconsolidation's rewrites) read the same variables."""

from __future__ import annotations

import phonenumbers
from pydantic import field_validator

from pcm_common.firewall import DEFAULT_PHONE_REGIONS, Action, WriteFirewall
from pcm_common.runtime.config import PcmSettings


class FirewallSettings(PcmSettings):
    # Write firewall (pcm_common.firewall), per category: block (422, nothing stored),
    # redact ([REDACTED_<KIND>], status "redacted") or allow.
    firewall_secrets: Action = Action.BLOCK
    firewall_pii: Action = Action.REDACT
    # Regions whose national phone formats are recognised, tried in this order
    # (international +.. numbers always are).
    firewall_phone_regions: tuple[str, ...] = DEFAULT_PHONE_REGIONS

    @field_validator("firewall_phone_regions")
    @classmethod
    def _known_regions(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        # A typo ("UK" for "GB") would silently match no phone number at all.
        unknown = [r for r in v if r not in phonenumbers.SUPPORTED_REGIONS]
        if unknown:
            raise ValueError(f"unknown phone regions {unknown}: use ISO 3166 codes (GB, DE, ...)")
        return v

    def write_firewall(self) -> WriteFirewall:
        return WriteFirewall(self.firewall_secrets, self.firewall_pii, self.firewall_phone_regions)
