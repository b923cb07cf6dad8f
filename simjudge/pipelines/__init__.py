"""simjudge.pipelines."""
