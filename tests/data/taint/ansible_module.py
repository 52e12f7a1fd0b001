# Engine probe: an Ansible module's parameters are its task's arguments (its callers decide them,
# as a public function's); run_command() runs a command line or vector.
from ansible.module_utils.basic import AnsibleModule


class Zone:
    def __init__(self, module):
        self.module = module
        self.name = module.params["name"]

    def boot(self):
        self.module.run_command("zoneadm -z %s boot" % self.name)  # $ command
        self.module.run_command(["zoneadm", "-z", self.name, "boot"])  # ok command (a vector: the program is zoneadm)


def main():
    module = AnsibleModule(argument_spec={"name": {"type": "str", "required": True}})
    Zone(module).boot()
    module.run_command("svcadm restart %s" % module.params["service"], use_unsafe_shell=True)  # $ command
    module.exit_json(changed=True)
