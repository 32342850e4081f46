#include "rdmalab/lab/setup.hpp"

#include "rdmalab/lab/cm_connect.hpp"

namespace rdmalab::lab {

namespace {

void call(const std::function<void(Setup&)>& hook, Setup& s) {
  if (hook) hook(s);
}

void say_note(Narrator& n, const std::string& note) {
  if (!note.empty()) n.say(note);
}

}  // namespace

Setup::Setup(Narrator& narrator, const CommonOptions& options, const SetupSpec& spec)
    : n(narrator), o(options), cm(spec.cm), role(role_of(options)) {
  n.step(spec.steps.backend);
  env = open_environment(n, o);
  // Two processes exchange their connection data over TCP, unless the CM
  // connects them in band.
  if (!cm) peer = open_peer(n, o);
  call(spec.after_environment, *this);

  n.step(spec.steps.resources);
  active.role = spec.active_role;
  passive.role = spec.passive_role;
  if (one_process()) {
    open_pair(n, env, active, passive, spec.active, spec.passive, o);
  } else {
    EndpointSpec mine_spec = plays_active() ? spec.active : spec.passive;
    mine_spec.device = o.device;
    open_endpoint(n, env, mine(), mine_spec, o);
  }
  call(spec.after_open, *this);

  const ConnectSpec& c = spec.connect;
  if (cm) {
    n.step(spec.steps.cm);
    if (plays_active() && spec.one_sided)
      expect_buffer_info(n, active, info_in, o, spec.passive_role);
    if (one_process()) {
      connect_pair_cm(n, env, active, passive, c);
    } else if (plays_passive()) {
      accept_cm(
          n, env, passive, *o.listen, [&] { call(spec.before_accept, *this); }, c);
    } else {
      const auto [host, port] = *verbs::parse_host_port(o.connect);
      connect_cm(n, env, active, host, port, c);
    }
    call(spec.after_cm, *this);
    if (spec.one_sided) {
      n.step(spec.steps.info);
      say_note(n, spec.info_note);
      if (plays_passive()) send_buffer_info(n, passive, info_out);
      if (plays_active()) remote = take_buffer_info(n, active, info_in, spec.passive_role);
      if (plays_passive() && (one_process() || !spec.leave_info_completion))
        (void)poll_and_show(n, passive, 1);
    }
  } else {
    // Out of band: fixed first PSNs, the connection messages (over TCP
    // between two processes), then each QP to RTS.
    const bool exchange_step = !spec.steps.exchange.empty();
    if (exchange_step)
      n.step(spec.steps.exchange);
    else
      n.step(spec.steps.connect);
    active.first_psn = spec.active_first_psn;
    passive.first_psn = spec.passive_first_psn;
    if (exchange_step) say_note(n, spec.exchange_note);
    const int mtu = c.mtu;
    verbs::ConnInfo from_active, from_passive;
    const auto exchange = [&] {
      if (peer) {
        remote = exchange_with_peer(n, *peer, mine(), mtu, spec.one_sided && plays_passive());
        (plays_active() ? from_passive : from_active) = remote;
      } else {
        from_active = show_exchange(n, active, mtu, false);
        from_passive = show_exchange(n, passive, mtu, spec.one_sided);
      }
    };
    if (exchange_step && (peer || spec.show_pair_in_exchange_step)) exchange();
    if (exchange_step) {
      n.step(spec.steps.connect);
      say_note(n, spec.connect_note);
    }
    if (!exchange_step || (!peer && !spec.show_pair_in_exchange_step)) exchange();
    if (plays_active()) connect_rc(n, active, from_passive, c, o);
    if (plays_passive()) connect_rc(n, passive, from_active, spec.passive_connect.value_or(c), o);
    if (spec.ready_after_connect) say_ready();
  }
  if (spec.one_sided && one_process()) {
    remote.va = passive.mr->va();
    remote.rkey = passive.mr->rkey();
    remote.len = passive.mr->length();
  }
}

void Setup::say_ready() {
  if (!peer) return;
  if (plays_passive()) tell_peer(*peer, "ready");
  if (plays_active()) await_peer(*peer, "ready");
}

void Setup::say_done() {
  if (!peer) return;
  if (plays_active()) tell_peer(*peer, "done");
  if (plays_passive()) await_peer(*peer, "done");
}

void Setup::disconnect() {
  if (!cm) return;
  if (plays_active())
    disconnect_cm(n, env, active);
  else
    await_disconnect_cm(n, env, passive);
}

}  // namespace rdmalab::lab
