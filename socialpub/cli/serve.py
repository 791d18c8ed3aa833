"""`socialpub serve`: the API under uvicorn. On the embedded default this process also
runs the periodic scheduler and the jobs."""
from __future__ import annotations

from socialpub.cli.common import add_command
from workers.scheduler import PeriodicScheduler

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def serve(args, settings):
    # Imported here, not at the top: the app (connexion, Flask, the contract) and
    # uvicorn take well over a second to import, and only this command needs them.
    import uvicorn

    from socialpub.app import create_app
    from socialpub.server import server_options

    app = create_app(settings)
    runtime = app.app.extensions["socialpub"]
    # On the embedded default the API process also runs the dispatcher and periodic
    # jobs, on the app's queue (in-process threads, or RQ when REDIS_URL is set).
    scheduler = PeriodicScheduler(runtime.queue, settings, tick_seconds=0.25).start()
    base = f"http://{args.host}:{args.port}"
    print(f"Serving the API at {base}/api/v1  (docs: {base}/docs, reference: {base}/api/v1/ui/)", flush=True)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning", **server_options(settings))
    finally:
        scheduler.stop()
        runtime.close()


def register(commands) -> None:
    command = add_command(
        commands, "serve", help="serve the API (embedded default: jobs run in this process)", run=serve,
        json_output=False,
    )
    command.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default: {DEFAULT_HOST})")
    command.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default: {DEFAULT_PORT})")
