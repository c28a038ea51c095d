"""Terraform templates for the sandbox provider that tests hand to ResourceCoder as a model's answer."""

KEY_PAIR = '''\
resource "sandbox_ecs_key_pair" "{{ r.address }}" {
  key_pair_name = "{{ r.name }}"
  region_id     = "{{ r.region }}"
}

output "{{ r.address }}_id" {
  value = sandbox_ecs_key_pair.{{ r.address }}.id
}

output "{{ r.address }}_name" {
  value = sandbox_ecs_key_pair.{{ r.address }}.key_pair_name
}
'''
