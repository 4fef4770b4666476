"""Signed deliveries whose JSON nests deeper than the service reads: a 400 with a reason, counted like any."""

import json

from bot.service.app import MAX_BODY


async def metric(bot, sample: str) -> float:
    """The value of one sample (`name{labels}`) on /metrics, 0 when absent."""
    assert bot.session is not None
    async with bot.session.get(bot.url + "metrics") as resp:
        text = await resp.text()
    return next(
        (float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(sample + " ")), 0.0
    )


async def test_json_nested_deeper_than_the_parser_goes_is_400_and_counted(bot, scenario):
    deep = b'{"action": "opened", "pull_request": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"}"
    assert len(deep) < MAX_BODY
    status, answer = await bot.deliver("pull_request", deep)
    assert status == 400 and "too deep" in answer["error"]
    status, answer = await bot.deliver("pull_request", b"[" * 100_000 + b"]" * 100_000)
    assert status == 400 and "too deep" in answer["error"]
    assert (
        await metric(bot, 'llama_bot_webhook_deliveries_total{event="pull_request",outcome="bad_request"}')
        == 2
    )
    # The shared parser is still good for the next delivery.
    status, _ = await bot.deliver("pull_request", scenario.pull_event("opened"))
    assert status == 202
    await bot.settle()


async def test_an_object_where_the_payload_has_a_number_is_400_not_500(bot, scenario):
    data = scenario.pull_event("opened")
    nested: dict = {}
    for _ in range(900):  # deep, yet within what the parser reads
        nested = {"n": nested}
    data["pull_request"]["number"] = nested
    status, answer = await bot.deliver("pull_request", json.dumps(data).encode())
    assert status == 400 and "shape" in answer["error"]
    assert (await bot.queue.counts())["queued"] == 0
    assert (
        await metric(bot, 'llama_bot_webhook_deliveries_total{event="pull_request",outcome="bad_request"}')
        == 1
    )
