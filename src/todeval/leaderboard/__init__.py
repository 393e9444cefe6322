"""A leaderboard site from submission archives (``todeval leaderboard build``).

Every archive in a folder is verified (:func:`todeval.submission.verify.verify_opened`, the
check ``todeval submit verify`` makes); the verified ones are ranked on one board per
benchmark, task set and protocol (the report's boards: rank intervals and tiers), each row with
its verification badge -- verified standard or custom, and who ran the agent: built-in,
trusted code (in-process), self-run (an endpoint) or isolated -- and a link to its transcripts
in the report's episode viewer; refused ones are listed apart with their reasons. The site is
static: relative links, no script on its own pages, no server.

Python::

    from todeval.leaderboard import build_site
    index = build_site(Path("submissions"), Path("site"))
"""

from todeval.leaderboard.site import SITE_INDEX, SiteIndex, build_site

__all__ = ["SITE_INDEX", "SiteIndex", "build_site"]
