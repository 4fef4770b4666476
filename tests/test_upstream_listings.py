"""The service lists an upstream's branches and tags once a minute however many analyses ask: a listing
kept that long confirms a pinned commit, and one it does not show is asked of the upstream again."""

from __future__ import annotations

import shutil

import pygit2

from bot.repos.upstreamrefs import (
    MAX_KEPT_LISTINGS,
    MAX_KEPT_TIPS,
    RecentListings,
    packed_tips,
    unpacked_tips,
)

TIPS = [pygit2.Oid(hex=f"{n:040x}") for n in range(1, 4)]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_listing_answers_for_a_minute_then_no_more():
    clock = Clock()
    listings = RecentListings(clock=clock)
    listings.remember("https://example.com/up", packed_tips(TIPS))
    clock.now += 59
    assert unpacked_tips(listings.recent("https://example.com/up") or b"") == TIPS
    assert listings.recent("https://example.com/other") is None
    clock.now += 2
    assert listings.recent("https://example.com/up") is None


def test_the_listings_kept_are_bounded():
    listings = RecentListings(clock=Clock())
    for n in range(MAX_KEPT_LISTINGS + 1):
        listings.remember(f"https://example.com/{n}", packed_tips(TIPS))
    assert listings.recent("https://example.com/0") is None
    assert listings.recent(f"https://example.com/{MAX_KEPT_LISTINGS}") is not None
    listings.remember("https://example.com/huge", bytes(20 * (MAX_KEPT_TIPS + 1)))
    listings.remember("https://example.com/torn", bytes(21))
    assert (
        listings.recent("https://example.com/huge") is None
        and listings.recent("https://example.com/torn") is None
    )


async def test_a_second_pull_request_within_the_minute_does_not_list_the_upstream_again(
    bot, scenario, tmp_path
):
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    (comment,) = scenario.bot_comments()
    assert "regenerated" in comment["body"] and "Could not tell whether" not in comment["body"]
    shutil.move(scenario.upstream_path, tmp_path / "gone")  # the mirror holds all the analysis reads
    new_sha = scenario.push({"README.md": "ollama, now with more words\n"})
    await bot.deliver("pull_request", scenario.pull_event("synchronize"))
    await bot.settle()
    (comment,) = scenario.bot_comments()
    assert new_sha[:12] in comment["body"] and "regenerated" in comment["body"]
    assert "Could not tell whether" not in comment["body"]  # the first listing still confirms v2
