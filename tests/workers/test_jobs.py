import subprocess
import sys


class TestLoadJobCode:
    def test_builds_what_the_first_job_would_otherwise_pay_for(self):
        # A fresh interpreter: this test process has long since imported everything.
        probe = (
            "import sys\n"
            "from workers.worker import load_job_code\n"
            "from socialpub.events import service as events\n"
            "assert 'socialpub.bulk.runner' not in sys.modules\n"
            "assert events._post_schema.cache_info().currsize == 0\n"
            "from sqlalchemy import inspect\n"
            "from persistence.posts import Post\n"
            "assert not inspect(Post).configured\n"
            "load_job_code()\n"
            "assert 'socialpub.bulk.runner' in sys.modules\n"
            "assert 'socialpub.webhooks.deliveries' in sys.modules\n"
            "assert events._post_schema.cache_info().currsize == 1\n"
            "assert inspect(Post).configured\n"
        )
        completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
        assert completed.returncode == 0, completed.stderr
