"""Rotating the App's credentials without losing deliveries: the webhook secret before a rotation is still
accepted while GITHUB_WEBHOOK_SECRET_PREVIOUS names it (and the log says which secret signed), and the
private key is read again on SIGHUP, a key that cannot sign leaving the running one in place. A real
aiohttp server, the fake GitHub checking the App's JWT, and a real `python -m bot serve` for the signal."""

from __future__ import annotations

import dataclasses
import json
import logging
import signal

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from gidgethub import BadRequest

from bot.service.app import SERVICE, reload_private_key
from bot.service.settings import Settings, SettingsError
from tests.conftest import SECRET, Bot, bot_settings
from tests.fakegithub import payload
from tests.test_service_restart import Served, serve_env, wait_until

PREVIOUS = "the secret the App had before its rotation"


def _new_key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return pem.decode()


def _push() -> dict:
    return payload("pull_request.opened")


async def test_a_delivery_signed_with_the_previous_secret_is_accepted_during_a_rotation(
    fake_github, scenario, tmp_path, caplog
):
    caplog.set_level(logging.INFO)
    settings = dataclasses.replace(
        bot_settings(fake_github, scenario, tmp_path / "var"), previous_webhook_secret=PREVIOUS
    )
    bot = await Bot(settings).start()
    try:
        status, _ = await bot.deliver("pull_request", _push(), secret=PREVIOUS)
        assert status == 202
        assert any(
            getattr(r, "signed_with", None) == "GITHUB_WEBHOOK_SECRET_PREVIOUS" for r in caplog.records
        )
        assert (await bot.deliver("pull_request", _push(), secret=SECRET))[0] == 202
        assert (await bot.deliver("pull_request", _push(), secret="some other secret, long enough"))[0] == 401
    finally:
        await bot.close()


async def test_without_the_previous_secret_configured_it_is_refused(bot):
    assert (await bot.deliver("pull_request", _push(), secret=PREVIOUS))[0] == 401


def test_the_previous_secret_is_held_to_the_same_length(tmp_path):
    env = {"GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY": _new_key(), "GITHUB_WEBHOOK_SECRET": SECRET}
    assert Settings.from_env(env).previous_webhook_secret is None
    assert (
        Settings.from_env({**env, "GITHUB_WEBHOOK_SECRET_PREVIOUS": PREVIOUS}).previous_webhook_secret
        == PREVIOUS
    )
    with pytest.raises(SettingsError, match="GITHUB_WEBHOOK_SECRET_PREVIOUS is 5 characters long"):
        Settings.from_env({**env, "GITHUB_WEBHOOK_SECRET_PREVIOUS": "short"})


async def test_the_private_key_read_again_signs_the_next_tokens(bot, fake_github, tmp_path):
    """The App's key file replaced by another key: after the reload GitHub refuses the App (the fake knows
    only its own key); the right key back, it is accepted again; a file that holds no key changes nothing."""
    github = bot.app[SERVICE].github
    path = tmp_path / "app.pem"
    env = {"GITHUB_PRIVATE_KEY_PATH": str(path)}
    path.write_text(_new_key())  # a key GitHub does not know
    assert reload_private_key(bot.app, env)
    with pytest.raises(BadRequest, match="could not be decoded"):
        await github.installations()
    path.write_text(fake_github.private_key_pem)
    assert reload_private_key(bot.app, env)
    assert await github.installations() == [fake_github.installation_id]
    path.write_text("not a key at all")
    assert not reload_private_key(bot.app, env)
    assert await github.installations() == [fake_github.installation_id]  # the running key stayed


async def test_sighup_reloads_the_key_of_a_running_service(fake_github, scenario, tmp_path):
    path = tmp_path / "app.pem"
    path.write_text(fake_github.private_key_pem)
    env = serve_env(fake_github, scenario, tmp_path / "var", GITHUB_PRIVATE_KEY_PATH=str(path))
    env.pop("GITHUB_PRIVATE_KEY")
    served = await Served.start(env, tmp_path / "serve.log")
    try:
        path.write_text("not a key at all")
        served.process.send_signal(signal.SIGHUP)

        async def said(message: str) -> bool:
            lines = [json.loads(line) for line in served.log.read_text().splitlines() if line.startswith("{")]
            return any(line.get("message", "").startswith(message) for line in lines)

        await wait_until(lambda: said("private key not reloaded"), timeout=10)
        path.write_text(fake_github.private_key_pem)
        served.process.send_signal(signal.SIGHUP)
        await wait_until(lambda: said("private key reloaded"), timeout=10)
        assert served.process.returncode is None
        assert "PRIVATE KEY" not in served.log.read_text()  # never logged
    finally:
        await served.stop()
