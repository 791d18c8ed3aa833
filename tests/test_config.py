"""Secrets generated once into var/ on the embedded default."""
import stat
import threading

from socialpub.config import generated_once


class TestGeneratedOnce:
    def test_generates_once_then_reads_the_same(self, tmp_path):
        path = tmp_path / "var" / "secret.key"
        first = generated_once(path, lambda: "first")
        assert first == "first" and generated_once(path, lambda: "second") == "first"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert [p.name for p in path.parent.iterdir()] == ["secret.key"]  # no drafts left behind

    def test_processes_starting_together_agree_on_one_whole_secret(self, tmp_path):
        path = tmp_path / "encryption.key"
        start = threading.Barrier(8, timeout=1)
        seen = []

        def slow_secret(number):
            def generate():
                try:
                    start.wait()  # every one of them is past the "does it exist" check
                except threading.BrokenBarrierError:
                    pass  # fewer of them generate: the race is then around one slow writer
                return f"secret-{number}" * 100
            return generate

        threads = [threading.Thread(target=lambda n=n: seen.append(generated_once(path, slow_secret(n)))) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert len(seen) == 8 and len(set(seen)) == 1 and seen[0].startswith("secret-")
        assert path.read_text() == seen[0]
