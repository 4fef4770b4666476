# llama-bot's webhook service as a container (docs/deploy.md, "In a container"):
#   docker build -t llama-bot .
#   docker run -d --name llama-bot -p 127.0.0.1:8080:8080 -v llama-bot-data:/data --env-file ... llama-bot
# Python as pyproject.toml's requires-python (>=3.11), git for the upstream mirrors, tini as PID 1 (it reaps
# the git processes an analysis leaves and passes SIGTERM and SIGHUP on to the service).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates tini \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY handlers ./handlers
RUN pip install . \
    && rm -rf /src

# A user of its own (uid and gid 10001: the group to let read the App's key file); the data directory is a
# volume it owns: the job and validation stores (in PostgreSQL instead with DATABASE_URL), the upstream
# mirrors and the facts store.
RUN groupadd --system --gid 10001 llama-bot \
    && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /home/llama-bot llama-bot \
    && mkdir -p /data \
    && chown llama-bot:llama-bot /data \
    && chmod 0700 /data
ENV LLAMA_BOT_DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8080
VOLUME ["/data"]
USER llama-bot
WORKDIR /home/llama-bot

EXPOSE 8080
# /healthz is 200 while the service runs (also while GitHub fails: nothing to restart for), so this says
# whether the process answers at all.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8080'), timeout=4)"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["python", "-m", "bot", "serve"]
