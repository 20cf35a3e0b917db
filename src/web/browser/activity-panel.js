// Activity panel: placeholder until written
