# A roles/profiles site over Forge modules (cases 123, 137 and 139 of ../shared/forge as profiles).
class profile::cache {
class { 'redis':
  default_install => false,
}
redis::instance { 'default':
  config_file_orig => '/etc/redis/myorig.conf',
  custom_options   => { 'myoption' => 'avalue', 'anotheroption' => 'anothervalue' },
}
redis::instance { 'app2':
  port => 7777,
}
}
class profile::lb {
  include keepalived
keepalived::vrrp::script { 'check_nginx':
  script => '/usr/bin/pkill -0 nginx',
}

keepalived::vrrp::sync_group { 'VI_50':
  group               => [ 'VI_50_IPV4', 'VI_50_IPV6' ],
  global_tracking     => true,
}

keepalived::vrrp::instance { 'VI_50_IPV4':
  interface           => 'eth0',
  state               => 'BACKUP',
  virtual_router_id   => 50,
  priority            => 100,
  auth_type           => 'PASS',
  auth_pass           => 'secret',
  virtual_ipaddress   => '10.0.0.1/32',
  track_script        => ['check_nginx'],
}

keepalived::vrrp::instance { 'VI_50_IPV6':
  interface           => 'eth0',
  state               => 'BACKUP',
  virtual_router_id   => 50,
  priority            => 100,
  virtual_ipaddress   => ['fe80::50/128', '2001:db8::50/128', ],
  track_script        => ['check_nginx'],
  native_ipv6         => true,
}
class { 'keepalived::global_defs':
  notification_email      => 'no@spam.tld',
  notification_email_from => 'no@spam.tld',
  smtp_server             => 'localhost',
  smtp_connect_timeout    => '60',
  router_id               => 'your_router_instance_id',
  bfd_rlimit_rttime       => 10000,
  checker_rlimit_rttime   => 10000,
  vrrp_rlimit_rttime      => 10000,
  bfd_priority            => -20,
  checker_priority        => -20,
  vrrp_priority           => -20,
  bfd_rt_priority         => 50,
  checker_rt_priority     => 50,
  vrrp_rt_priority        => 50,
  bfd_no_swap             => true,
  checker_no_swap         => true,
  vrrp_no_swap            => true,
  vrrp_version            => 3,
  max_auto_priority       => 99,
  vrrp_notify_fifo        => '/run/keepalived.fifo',
  vrrp_notify_fifo_script => '/usr/local/bin/keepalived-fifo.sh',
}
}
class profile::motd {
  file { '/etc/motd': content => "Welcome to ${trusted['certname']} (${facts['os']['name']} ${facts['os']['release']['major']})\n" }
}
class role::app {
  include profile::motd
  include profile::cache
  include profile::lb
}
node default {
  include role::app
}
