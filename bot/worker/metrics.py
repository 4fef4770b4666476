"""The service's Prometheus metrics."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


class Metrics:
    """The service's Prometheus metrics, in a registry of their own (one per app)."""

    def __init__(self, registry: CollectorRegistry | None = None):
        self.registry = registry or CollectorRegistry()
        self.deliveries = Counter(
            "llama_bot_webhook_deliveries",
            "Webhook deliveries by event and outcome",
            ["event", "outcome"],
            registry=self.registry,
        )
        self.jobs = Histogram(
            "llama_bot_job_duration_seconds",
            "Job run time by kind and outcome",
            ["kind", "outcome"],
            registry=self.registry,
            buckets=(0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, float("inf")),
        )
        self.queue = Gauge(
            "llama_bot_queue_jobs", "Jobs in the queue by status", ["status"], registry=self.registry
        )
        self.github = Counter(
            "llama_bot_github_requests",
            "GitHub API calls by method and status",
            ["method", "status"],
            registry=self.registry,
        )

        self.facts = Counter(
            "llama_bot_upstream_facts",
            "Look-ups in the store of upstream facts (per blob and pair of blobs) by outcome",
            ["outcome"],
            registry=self.registry,
        )

    def github_call(self, method: str, status: str) -> None:
        self.github.labels(method, status).inc()
